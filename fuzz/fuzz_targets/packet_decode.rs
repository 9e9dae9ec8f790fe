//! A fixed LTTng-UST-like metadata (fuzz/data/metadata: compact and large event
//! headers, variants, sequences, strings, floats, enums) + the fuzzer's bytes as one
//! data stream file: index it, read every item, render it as JSON and text.
//! Errors are fine; only a panic, hang or OOM is a finding.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;

#[path = "common.rs"]
mod common;

type Fixed = (ctf::ir::TraceClass, ctf::ir::MetadataFormat, ctf::plan::Plan);

fn fixed() -> &'static Fixed {
    static F: OnceLock<Fixed> = OnceLock::new();
    F.get_or_init(|| {
        let md = include_str!("../data/metadata").as_bytes();
        let (tc, format) = ctf::metadata::parse_metadata(md, Path::new("metadata")).expect("fuzz metadata parses");
        let plan = ctf::plan::Plan::compile(&tc).expect("fuzz metadata compiles");
        (tc, format, plan)
    })
}

fuzz_target!(|data: &[u8]| {
    let (tc, format, plan) = fixed().clone();
    common::decode_all(tc, format, plan, data);
});
