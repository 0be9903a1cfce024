-- The number of records, kept in meta by every write, so /metrics never counts the table.
INSERT INTO meta (key, value) SELECT 'rows', count(*)::text FROM activity
  ON CONFLICT (key) DO UPDATE SET value = excluded.value;
