-- The mail lifecycle: one row per message and recipient (Mailjet's MessageID), the delivery events it had, and the
-- suppression list. States are ranked (src/mail/lifecycle.ts): a message is in the highest-ranked state it reached.
CREATE TABLE mail_messages (
  message_id TEXT PRIMARY KEY,
  message_uuid TEXT,
  custom_id TEXT,
  email TEXT NOT NULL,
  sender TEXT,
  transport TEXT,
  payload TEXT,
  state TEXT NOT NULL,
  bounce TEXT,
  rank INTEGER NOT NULL,
  events INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX mail_messages_by_uuid ON mail_messages (message_uuid);
CREATE INDEX mail_messages_by_custom_id ON mail_messages (custom_id);
-- (message_id, key) makes a repeated or replayed event a no-op.
CREATE TABLE mail_events (
  message_id TEXT NOT NULL,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,
  fact TEXT NOT NULL,
  time INTEGER NOT NULL,
  email TEXT NOT NULL,
  detail TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (message_id, key)
);
CREATE INDEX mail_events_by_recipient ON mail_events (email, fact);
-- sender '*': every sender (the event came before, or without, a send record naming one).
CREATE TABLE mail_suppressions (
  sender TEXT NOT NULL,
  email TEXT NOT NULL,
  reason TEXT NOT NULL,
  reason_rank INTEGER NOT NULL,
  message_id TEXT,
  event_key TEXT,
  since INTEGER NOT NULL,
  PRIMARY KEY (sender, email)
);
CREATE INDEX mail_suppressions_by_email ON mail_suppressions (email);
