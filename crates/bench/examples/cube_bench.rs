//! Prints the C9 tables: `cargo run --release -p bench --example cube_bench [quick]`.
fn main() -> Result<(), cube::CubeError> {
    let quick = std::env::args().any(|a| a == "quick");
    for t in bench::cube_experiments::run(&bench::cube_experiments::BenchOptions { quick, ..Default::default() })? {
        println!("{}", t.to_text());
    }
    Ok(())
}
