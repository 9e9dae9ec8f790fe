//! What `tracecube query DIR --metric events --last 1s` costs, split: opening the
//! cube directory (checks, catalog, history index) and answering. Prints both times
//! and the process's peak resident memory (`VmHWM`).
//!
//! `cargo run --profile ci -p cube --example cube_open -- DIR`

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: cube_open DIR");
        std::process::exit(2);
    };
    let t = std::time::Instant::now();
    let c = cube::open(std::path::Path::new(&dir)).unwrap_or_else(|e| panic!("{e}"));
    let opened = t.elapsed();
    let r = c.query(&cube::Request::new("events", cube::When::Last(1_000_000_000))).unwrap_or_else(|e| panic!("{e}"));
    let answered = t.elapsed() - opened;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status.lines().find(|l| l.starts_with("VmHWM")).map_or("VmHWM: ?", str::trim);
    print!("{}", r.to_text());
    println!("open {opened:.3?}, query {answered:.3?}, {}", hwm.split_whitespace().collect::<Vec<_>>().join(" "));
}
