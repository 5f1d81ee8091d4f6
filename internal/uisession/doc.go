// Package uisession is the web UI's sign-in: administrator accounts with bcrypt password hashes
// (Mongo `ui_users`), server-side sessions (Mongo `ui_sessions`, only a hash of the cookie value
// stored) and the per-session CSRF token every UI form carries. Sessions live in Mongo, not in
// process memory, so any API replica can serve any signed-in browser, and logging out deletes the
// session so a copied cookie stops working at once.
package uisession
