-- +goose Up
-- sends.signature: the controller's signature over the declaration sent, as the host received
-- it. A report names the send it answers and carries that signature; one whose signature is not
-- the send's is not believed. Sends recorded before this column have '' and are believed by
-- send id, generation and digest, as before.
ALTER TABLE sends ADD COLUMN signature TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE sends DROP COLUMN signature;
