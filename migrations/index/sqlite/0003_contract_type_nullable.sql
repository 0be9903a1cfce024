-- contract_type becomes nullable: records of contracts older than ERC-721 and ERC-1155 (CryptoPunks) have none.
-- SQLite cannot drop NOT NULL in place, so the table is rebuilt (same columns, keys and indexes); the empty
-- string that stood for "none" before becomes NULL.
CREATE TABLE activity_next (
  block_number INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  batch_index INTEGER NOT NULL,
  kind TEXT NOT NULL,
  contract TEXT NOT NULL,
  token_id TEXT NOT NULL,
  from_addr TEXT NOT NULL,
  to_addr TEXT NOT NULL,
  quantity TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  block_hash TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  contract_type TEXT,
  marketplace TEXT,
  currency TEXT,
  price TEXT,
  price_usd REAL,
  PRIMARY KEY (block_number, log_index, batch_index)
) WITHOUT ROWID;
INSERT INTO activity_next
  SELECT block_number, log_index, batch_index, kind, contract, token_id, from_addr, to_addr, quantity, tx_hash,
    block_hash, timestamp, NULLIF(contract_type, ''), marketplace, currency, price, price_usd
  FROM activity;
DROP TABLE activity;
ALTER TABLE activity_next RENAME TO activity;
CREATE INDEX activity_by_contract ON activity (contract, block_number, log_index, batch_index);
CREATE INDEX activity_by_token ON activity (contract, token_id, block_number, log_index, batch_index);
