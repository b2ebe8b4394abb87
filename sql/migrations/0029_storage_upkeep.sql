-- Automatic maintenance that did no useful work, made cheap (docs/engine.md, "Statistics and
-- vacuum"), and two ephemeral columns nothing reads any more, dropped. The settings change no row
-- and no query's answer; no procedure a broker calls reads the dropped columns.
--
-- log_segments.frames: ANALYZE keeps no statistics of it. No statement filters, joins or sorts on a
-- segment's frames, so the planner never reads them; yet ANALYZE of an array column detoasts each
-- sampled array up to 64 kB and ranks every element it holds, here 30 000 sampled segments of up to
-- a hundred JSON frames each. On a busy queue each automatic ANALYZE of the table cost 2.5-4 s of
-- CPU, taken from whatever ran beside it. The column's width estimate now comes from its type,
-- which no plan depends on.
alter table queen.log_segments alter column frames set statistics 0;

-- ephemeral_messages: no vacuum set off by inserts alone. Such a vacuum freezes and marks visible
-- every page of a table whose rows are deleted within seconds of being consumed, and on a large
-- backlog wrote each page of it again (10 s, 0.5 s of CPU) in the middle of its pops. Deletes (the
-- trim of what every group consumed, the TTL, drops, resets) still set off vacuums at the usual
-- thresholds, so dead rows are reclaimed as before, ANALYZE runs as before, and a vacuum against
-- transaction-id wraparound is never switched off.
alter table queen.ephemeral_messages set (autovacuum_vacuum_insert_threshold = -1);

-- ephemeral_rings.next_seq and ephemeral_groups.scan_from have been unread since 0028 (numbers come
-- from queen.ephemeral_numbers; a queue-wide pop reads each partition from the group's cursor
-- there, into which 0028 carried every scan_from). A broker of the previous release calls the
-- procedures this release installs (it never installs its own over a newer database), and none of
-- them reads either column.
alter table queen.ephemeral_rings drop column next_seq;
alter table queen.ephemeral_groups drop column scan_from;
