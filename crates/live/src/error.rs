//! Errors of the live crate: each names the peer (or source), the command and the cause.

/// A live-source or pipeline error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// The network failed during a command.
    #[error("relay {peer}: {cmd}: {source}")]
    Io {
        /// `host:port` of the relay daemon.
        peer: String,
        /// The command being run.
        cmd: &'static str,
        /// The cause.
        source: std::io::Error,
    },
    /// The relay answered something we cannot accept.
    #[error("relay {peer}: {cmd}: {msg}")]
    Protocol {
        /// `host:port` of the relay daemon.
        peer: String,
        /// The command being run.
        cmd: &'static str,
        /// What was wrong.
        msg: String,
    },
    /// Another viewer is attached to the session (after a reconnection: the relay has
    /// not yet noticed that our previous connection is gone).
    #[error("relay {peer}: ATTACH_SESSION: session {session}: another viewer is attached")]
    Busy {
        /// `host:port` of the relay daemon.
        peer: String,
        /// The relay's session id.
        session: u64,
    },
    /// A bad `net://` URL.
    #[error("bad live URL {url:?}: {msg}")]
    Url {
        /// The URL.
        url: String,
        /// What was wrong.
        msg: String,
    },
    /// The session named in the URL is not on the relay.
    #[error("relay {peer}: no live session {host}/{name} (sessions: {known})")]
    NoSession {
        /// `host:port` of the relay daemon.
        peer: String,
        /// Host name asked for.
        host: String,
        /// Session name asked for.
        name: String,
        /// Sessions the relay has.
        known: String,
    },
    /// Decoding what was received failed.
    #[error("{source_name}: {msg}")]
    Decode {
        /// The source (URL or path).
        source_name: String,
        /// The decoding error.
        msg: String,
    },
    /// The cube refused an update.
    #[error("cube: {0}")]
    Cube(#[from] cube::CubeError),
    /// Writing output failed.
    #[error("writing {what}: {source}")]
    Output {
        /// What was written.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Result of the live crate.
pub type Result<T> = std::result::Result<T, LiveError>;
