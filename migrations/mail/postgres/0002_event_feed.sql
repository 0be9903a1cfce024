-- The event feed (`GET /events?after=<cursor>`): every stored event gets a number in the order it was stored, so a
-- reader that remembers the last number it saw gets each event once. Writers of events take one advisory lock per
-- transaction (src/mail/store.ts), so numbers are committed in order and no reader skips one committed late.
ALTER TABLE mail_events ADD COLUMN seq BIGSERIAL;
CREATE UNIQUE INDEX mail_events_by_seq ON mail_events (seq);
CREATE INDEX mail_events_by_kind ON mail_events (kind, seq);
