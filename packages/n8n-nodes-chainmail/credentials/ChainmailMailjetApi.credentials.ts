import type {
  IAuthenticateGeneric,
  ICredentialTestRequest,
  ICredentialType,
  Icon,
  INodeProperties,
} from "n8n-workflow";

/** Mailjet's Send API v3.1: HTTP Basic with the API key as user and the secret key as password. */
export class ChainmailMailjetApi implements ICredentialType {
  name = "chainmailMailjetApi";

  displayName = "Chainmail Mailjet API";

  icon: Icon = { light: "file:../icons/chainmail.svg", dark: "file:../icons/chainmail.dark.svg" };

  documentationUrl = "https://dev.mailjet.com/reference/overview/authentication/";

  properties: INodeProperties[] = [
    {
      displayName: "API Key",
      name: "apiKey",
      type: "string",
      typeOptions: { password: true },
      default: "",
      required: true,
      description: "The Mailjet API key",
    },
    {
      displayName: "Secret Key",
      name: "secretKey",
      type: "string",
      typeOptions: { password: true },
      default: "",
      required: true,
      description: "The Mailjet secret key",
    },
    {
      displayName: "Base URL",
      name: "baseUrl",
      type: "string",
      default: "https://api.mailjet.com",
      description: "Origin of the Mailjet-compatible API",
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: "generic",
    properties: { auth: { username: "={{$credentials.apiKey}}", password: "={{$credentials.secretKey}}" } },
  };

  test: ICredentialTestRequest = {
    request: { baseURL: "={{$credentials.baseUrl}}", url: "/v3/REST/message", qs: { Limit: 1 }, method: "GET" },
  };
}
