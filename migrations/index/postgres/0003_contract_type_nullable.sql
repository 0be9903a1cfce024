-- contract_type becomes nullable: records of contracts older than ERC-721 and ERC-1155 (CryptoPunks) have none;
-- the empty string that stood for "none" before becomes NULL.
ALTER TABLE activity ALTER COLUMN contract_type DROP NOT NULL;
UPDATE activity SET contract_type = NULL WHERE contract_type = '';
