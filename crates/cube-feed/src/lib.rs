//! Linux kernel events → cube updates: the kernel feed and the parallel cube build
//! (requirement C8).
//!
//! Where it sits: it wires `ctf` (events), `analysis`'s kernel model (event layouts,
//! fd tables), `engine` (slices, workers, the ordered merge) and `cube` (which knows
//! nothing of traces). Data flow: slices of the trace are decoded on workers into
//! [`log::SliceLog`]s — the partial history of event counts per frame and the
//! state-dependent facts — which the [`apply::Applier`] applies to the cube in time
//! order ([`build`]). [`KernelFeed`] does the same one event at a time, for live
//! sources.
//!
//! ```no_run
//! let (cube, report) = cube_feed::build_from_trace(std::path::Path::new("trace"), &Default::default())?;
//! print!("{}", report.to_text());
//! # Ok::<(), cube::CubeError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod apply;
pub mod build;
pub mod log;

pub use build::{build_from_set, build_from_trace, build_with_progress, BuildOptions, BuildReport, CubeBuild, KernelFeed};
