//! Progress bars on long work: drawn on stderr when it is a terminal, silent
//! otherwise (pipes, CI logs, tests).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A byte-progress bar labelled `what`, hidden when stderr is not a terminal.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar for work measured in bytes of trace.
    pub fn bytes(what: &str) -> Progress {
        let bar =
            ProgressBar::with_draw_target(None, if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() });
        let style =
            ProgressStyle::with_template("{prefix} [{elapsed_precise}] {wide_bar} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, eta {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(what.to_string());
        Progress { bar }
    }

    /// Records `done` of `total` bytes.
    pub fn update(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
    }

    /// The callback form of [`Progress::update`].
    pub fn callback(&self) -> impl Fn(u64, u64) + '_ {
        move |d, t| self.update(d, t)
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
