-- GET with Connection: close: every request opens a new connection (over https, a new full
-- TLS handshake: wrk does not resume sessions).
wrk.headers["Connection"] = "close"
