-- retract: the retraction email that carries a mailed record a reorg removed (set once: never twice).
ALTER TABLE watch_records ADD COLUMN retraction TEXT;
-- max_per_hour: the clock hour (hours since the epoch, UTC) whose cap held the record back for that hour's digest.
ALTER TABLE watch_records ADD COLUMN held_hour INTEGER;
-- What an email is: record (a record's, a transaction's or a digest's), retraction, or overflow (an hour's held
-- records); only record emails count toward max_per_hour.
ALTER TABLE watch_mail ADD COLUMN kind TEXT NOT NULL DEFAULT 'record';
CREATE INDEX watch_mail_by_rule ON watch_mail (rule, created_at);
-- The retractions due are looked for at every poll: only the few records a reorg removed are in this index.
CREATE INDEX watch_records_reorged ON watch_records (rule, seq) WHERE reorged = 1;
