//! What the binary's integration tests share. (Each test file uses part of it.)
#![allow(dead_code)]

use std::process::{Child, Command};

/// The `tracecube` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tracecube"))
}

/// A server child process, killed and reaped when dropped, also when an assertion fails.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
