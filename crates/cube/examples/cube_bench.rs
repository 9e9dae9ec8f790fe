//! Prints the C9 tables: `cargo run --release -p cube --example cube_bench [quick]`.
fn main() -> Result<(), cube::CubeError> {
    let quick = std::env::args().any(|a| a == "quick");
    for t in cube::bench::run(&cube::bench::BenchOptions { quick, ..Default::default() })? {
        println!("{}", t.to_text());
    }
    Ok(())
}
