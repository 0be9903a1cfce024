import type {
  IAuthenticateGeneric,
  ICredentialTestRequest,
  ICredentialType,
  Icon,
  INodeProperties,
} from "n8n-workflow";

/**
 * OpenSea's API v2: the key in the X-API-KEY header. The RPC URL is optional and is never sent the key: requests to
 * it go out without this credential's header (shared/host.ts).
 */
export class ChainmailOpenSeaApi implements ICredentialType {
  name = "chainmailOpenSeaApi";

  displayName = "Chainmail OpenSea API";

  icon: Icon = { light: "file:../icons/chainmail.svg", dark: "file:../icons/chainmail.dark.svg" };

  documentationUrl = "https://docs.opensea.io/reference/api-keys";

  properties: INodeProperties[] = [
    {
      displayName: "API Key",
      name: "apiKey",
      type: "string",
      typeOptions: { password: true },
      default: "",
      required: true,
      description: "The OpenSea API key",
    },
    {
      displayName: "Base URL",
      name: "baseUrl",
      type: "string",
      default: "https://api.opensea.io",
      description: "Origin of the OpenSea-compatible API",
    },
    // Hidden although its name says URL: a provider's URL carries its key (https://mainnet.infura.io/v3/<key>).
    // eslint-disable-next-line @n8n/community-nodes/credential-unnecessary-password
    {
      displayName: "Ethereum RPC URL",
      name: "rpcUrl",
      type: "string",
      typeOptions: { password: true },
      default: "",
      placeholder: "https://mainnet.example/v3/your-key",
      description:
        "Optional: a JSON-RPC endpoint from which each record gets its block and each sale its USD price (OpenSea gives neither)",
    },
  ];

  authenticate: IAuthenticateGeneric = {
    type: "generic",
    properties: { headers: { "X-API-KEY": "={{$credentials.apiKey}}" } },
  };

  // The general events endpoint: one event, answered only to a key OpenSea accepts.
  test: ICredentialTestRequest = {
    request: { baseURL: "={{$credentials.baseUrl}}", url: "/api/v2/events", qs: { limit: 1 }, method: "GET" },
  };
}
