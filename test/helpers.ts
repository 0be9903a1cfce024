/** Test helpers: configs pointing at the local upstreams, fast retries. */
import { type Config, loadConfig } from "../src/core/config.js";

/** A config for tests: local base URLs, short backoff so retry tests stay quick. */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    CHAINMAIL_RETRY_BASE_MS: "20",
    CHAINMAIL_RETRY_MAX_DELAY_MS: "2000",
    CHAINMAIL_TIMEOUT_MS: "5000",
    ...env,
  });
}
