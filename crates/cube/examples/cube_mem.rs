//! Memory breakdown of a one-day, 1000-metric cube (diagnostics).
fn main() -> Result<(), cube::CubeError> {
    let mut cfg = cube::CubeConfig::default();
    cfg.levels.truncate(3);
    cfg.metrics.truncate(1);
    let mut c = cube::Cube::new(cfg)?;
    let m = c.schema.metric("events").unwrap();
    let cells: Vec<_> = (0..1000)
        .map(|i| {
            let o = c.schema.dims[4].member(&["k", &format!("op{}", i / 10)]);
            let p = c.schema.dims[1].member(&[&(i % 10).to_string()]);
            c.cell(m, &[o, p])
        })
        .collect();
    let mut x = 88172645463325252u64;
    for i in 0..8_640_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.add(1_700_000_000_000_000_000 + i * 10_000_000, cells[(x % 1000) as usize], 1)?;
    }
    c.finish()?;
    println!("cube memory {} bytes", c.memory());
    for (i, l) in c.levels().iter().enumerate() {
        println!("level {i}: {} bytes, {} segments", l.memory(), l.segment_count());
        for s in l.segment_stats() {
            println!("   {s}");
        }
    }
    Ok(())
}
