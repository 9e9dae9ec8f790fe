//! One module per subcommand.

pub mod analyze;
pub mod count;
pub mod cube;
pub mod demo;
pub mod dump;
pub mod export;
pub mod info;
pub mod live;
pub mod progress;
pub mod serve;
pub mod synth;
