//! `net://HOST[:PORT]` and `net://HOST[:PORT]/host/HOSTNAME/SESSION` URLs, as
//! Babeltrace's `lttng-live` source and `lttng view` spell them.

use crate::error::{LiveError, Result};
use crate::proto::DEFAULT_PORT;

/// A parsed live URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveUrl {
    /// Relay host.
    pub host: String,
    /// Relay live port.
    pub port: u16,
    /// `(traced host name, session name)`, when the URL names a session.
    pub session: Option<(String, String)>,
}

impl LiveUrl {
    /// Parses `net://HOST[:PORT][/host/HOSTNAME/SESSION]` (`net4://` is accepted too).
    pub fn parse(url: &str) -> Result<LiveUrl> {
        let bad = |msg: &str| LiveError::Url { url: url.into(), msg: msg.into() };
        let rest =
            url.strip_prefix("net://").or_else(|| url.strip_prefix("net4://")).ok_or_else(|| bad("expected net://HOST[:PORT][/host/HOSTNAME/SESSION]"))?;
        let (hostport, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if hostport.is_empty() {
            return Err(bad("missing host"));
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') || h.starts_with('[') => {
                (h.trim_matches(|c| c == '[' || c == ']'), p.parse::<u16>().map_err(|_| bad("bad port"))?)
            }
            _ => (hostport, DEFAULT_PORT),
        };
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let session = match parts.as_slice() {
            [] => None,
            ["host", h, s] => Some((h.to_string(), s.to_string())),
            _ => return Err(bad("the path must be /host/HOSTNAME/SESSION")),
        };
        Ok(LiveUrl { host: host.into(), port, session })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_babeltrace_accepts() {
        let u = LiveUrl::parse("net://localhost").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.session), ("localhost", 5344, None));
        let u = LiveUrl::parse("net://127.0.0.1:6000/host/box/my-sess").unwrap();
        assert_eq!(u.port, 6000);
        assert_eq!(u.session, Some(("box".into(), "my-sess".into())));
        assert!(LiveUrl::parse("tcp://x").is_err());
        assert!(LiveUrl::parse("net://x/host/only").is_err());
        assert!(LiveUrl::parse("net://x:99999").is_err());
    }
}
