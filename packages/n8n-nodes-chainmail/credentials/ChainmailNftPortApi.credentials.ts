import type {
  IAuthenticateGeneric,
  ICredentialTestRequest,
  ICredentialType,
  Icon,
  INodeProperties,
} from "n8n-workflow";

/** NFTPort's API v0: the key itself as the Authorization header, no scheme. */
export class ChainmailNftPortApi implements ICredentialType {
  name = "chainmailNftPortApi";

  displayName = "Chainmail NFTPort API";

  icon: Icon = { light: "file:../icons/chainmail.svg", dark: "file:../icons/chainmail.dark.svg" };

  documentationUrl = "https://docs.nftport.xyz/reference/retrieve-all-transactions";

  properties: INodeProperties[] = [
    {
      displayName: "API Key",
      name: "apiKey",
      type: "string",
      typeOptions: { password: true },
      default: "",
      required: true,
      description: "The NFTPort API key",
    },
    {
      displayName: "Base URL",
      name: "baseUrl",
      type: "string",
      default: "https://api.nftport.xyz",
      description: "Origin of the NFTPort-compatible API",
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: "generic",
    properties: { headers: { Authorization: "={{$credentials.apiKey}}" } },
  };

  test: ICredentialTestRequest = {
    request: {
      baseURL: "={{$credentials.baseUrl}}",
      url: "/v0/transactions",
      qs: { chain: "ethereum", type: "all", page_size: 1 },
      method: "GET",
    },
  };
}
