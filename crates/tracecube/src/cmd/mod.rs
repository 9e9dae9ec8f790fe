//! One module per subcommand.

// clap shows the doc comments of the argument structs as `--help` text, where
// `DIM[:LEVEL]` is syntax, not a link.
#![allow(rustdoc::broken_intra_doc_links)]

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
