-- +goose Up
-- A node's row and its last report's row are written again by every report (the time, the
-- repeat count). PostgreSQL writes a new version of a row each time; when it fits on the same
-- page and no indexed column moved, the indexes are left alone (a heap-only update) and the
-- old version is reclaimed as the page is read. Pages filled to the brim leave no room for it,
-- and then the update writes every index of the table too and the table grows until vacuumed.
-- Leaving room on each page keeps nearly all of them in place.
-- Rows written before this keep their pages as they are until `VACUUM FULL nodes, reports`.
ALTER TABLE nodes SET (fillfactor = 50);
ALTER TABLE reports SET (fillfactor = 70);

-- +goose Down
ALTER TABLE nodes RESET (fillfactor);
ALTER TABLE reports RESET (fillfactor);
