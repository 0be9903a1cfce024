-- chainmail watch: per rule its start and read position; every record it took; the journal of its emails.
CREATE TABLE watch_rules (
  rule TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  floor_block BIGINT,
  floor_date TEXT NOT NULL,
  read_block BIGINT,
  read_date TEXT,
  last_mailed TEXT,
  digest_since BIGINT
);
-- (rule, key) is the promise "never twice": a record is taken once.
CREATE TABLE watch_records (
  rule TEXT NOT NULL,
  key TEXT NOT NULL,
  seq BIGINT NOT NULL,
  block_number BIGINT,
  transaction_date TEXT NOT NULL,
  record TEXT NOT NULL,
  state TEXT NOT NULL,
  custom_id TEXT,
  reorged INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (rule, key)
);
CREATE INDEX watch_records_by_block ON watch_records (rule, block_number);
CREATE INDEX watch_records_by_state ON watch_records (rule, state, seq);
CREATE INDEX watch_records_by_mail ON watch_records (custom_id);
CREATE TABLE watch_mail (
  custom_id TEXT PRIMARY KEY,
  rule TEXT NOT NULL,
  state TEXT NOT NULL,
  message TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 1,
  result TEXT,
  created_at BIGINT NOT NULL,
  settled_at BIGINT
);
CREATE INDEX watch_mail_by_state ON watch_mail (state, created_at);
