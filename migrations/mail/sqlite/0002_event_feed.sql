-- The event feed (`GET /events?after=<cursor>`): every stored event gets a number in the order it was stored, so a
-- reader that remembers the last number it saw gets each event once. SQLite cannot add such a column in place: the
-- table is built again, the events kept in the order they came.
CREATE TABLE mail_events_numbered (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id TEXT NOT NULL,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,
  fact TEXT NOT NULL,
  time INTEGER NOT NULL,
  email TEXT NOT NULL,
  detail TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  UNIQUE (message_id, key)
);
INSERT INTO mail_events_numbered (message_id, key, kind, fact, time, email, detail, received_at)
  SELECT message_id, key, kind, fact, time, email, detail, received_at FROM mail_events ORDER BY received_at, rowid;
DROP TABLE mail_events;
ALTER TABLE mail_events_numbered RENAME TO mail_events;
CREATE INDEX mail_events_by_recipient ON mail_events (email, fact);
CREATE INDEX mail_events_by_kind ON mail_events (kind, seq);
