-- ANALYZE keeps no statistics of log_segments.frames (docs/engine.md, "Statistics"). No statement
-- filters, joins or sorts on a segment's frames, so the planner never reads them; yet ANALYZE of an
-- array column detoasts each sampled array up to 64 kB and ranks every element it holds, here
-- 30 000 sampled segments of up to a hundred JSON frames each. On a busy queue each automatic
-- ANALYZE of the table cost 2.5-4 s of CPU (of one of the machine's two cores), taken from whatever
-- ran beside it. The column's width estimate now comes from its type, which no plan depends on.
alter table queen.log_segments alter column frames set statistics 0;
