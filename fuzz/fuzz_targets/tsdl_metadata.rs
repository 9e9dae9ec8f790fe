//! Metadata bytes (plain-text TSDL or packetized) -> TraceClass -> decoding Plan.
//! Errors are fine; only a panic, hang or OOM is a finding.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz");
    let _ = ctf::metadata::metadata_text(data, path);
    if let Ok((tc, _format)) = ctf::metadata::parse_metadata(data, path) {
        if let Ok(plan) = ctf::plan::Plan::compile(&tc) {
            // Touch what the rest of the reader reads from a plan.
            for c in &tc.clocks {
                let conv = ctf::clock::ClockConv::new(c);
                let _ = (conv.to_ns(0), conv.to_ns(u64::MAX), conv.exact_ns(u64::MAX));
            }
            for sp in &plan.streams {
                let _ = plan.stream(sp.id);
            }
        }
    }
});
