import type {
  IAuthenticateGeneric,
  ICredentialTestRequest,
  ICredentialType,
  Icon,
  INodeProperties,
} from "n8n-workflow";

/** A `chainmail serve` elsewhere (for instance one that reads its own index): its URL and a bearer token. */
export class ChainmailServiceApi implements ICredentialType {
  name = "chainmailServiceApi";

  displayName = "Chainmail Service API";

  icon: Icon = { light: "file:../icons/chainmail.svg", dark: "file:../icons/chainmail.dark.svg" };

  // chainmail serve's own API page, at its default address.
  documentationUrl = "http://127.0.0.1:8080/docs";

  properties: INodeProperties[] = [
    {
      displayName: "Base URL",
      name: "baseUrl",
      type: "string",
      default: "",
      required: true,
      placeholder: "http://127.0.0.1:8080",
      description: "Where chainmail serve listens",
    },
    {
      displayName: "Token",
      name: "token",
      type: "string",
      typeOptions: { password: true },
      default: "",
      description: "A bearer token of that service (one of its CHAINMAIL_TOKENS); empty when it asks for none",
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: "generic",
    properties: { headers: { Authorization: "={{$credentials.token ? 'Bearer ' + $credentials.token : ''}}" } },
  };

  test: ICredentialTestRequest = {
    request: {
      baseURL: "={{$credentials.baseUrl}}",
      url: "/nodes/nft-transactions-on-chain",
      method: "POST",
      body: { query: { page_size: 1 } },
    },
  };
}
