//! Compares normal survival-function implementations with scipy's
//! `special.ndtr(-z)` on the committed vectors (`tests/data/normal_vectors.json`):
//! etip-stats' `normal_sf` (libm erf/erfc, Cephes layout) and statrs 0.18
//! (`Normal::sf` and `0.5·erfc(z/√2)` with statrs' erfc).
//!
//! Run: `cargo run -p etip-stats --example normal_tail_accuracy`

use std::f64::consts::FRAC_1_SQRT_2;

use statrs::distribution::{ContinuousCDF, Normal};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/normal_vectors.json"
    );
    let file: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let cases = file["cases"].as_array().ok_or("no cases array")?;
    let normal = Normal::new(0.0, 1.0)?;
    type Imp = (&'static str, Box<dyn Fn(f64) -> f64>);
    let imps: Vec<Imp> = vec![
        ("etip_stats::normal_sf", Box::new(etip_stats::normal_sf)),
        ("statrs Normal::sf", Box::new(move |z| normal.sf(z))),
        (
            "statrs 0.5*erfc(z/sqrt2)",
            Box::new(|z: f64| 0.5 * statrs::function::erf::erfc(z * FRAC_1_SQRT_2)),
        ),
    ];
    println!(
        "{:<28} {:>14} {:>14} {:>14}",
        "implementation", "max rel |z|<5", "max rel z>=5", "max rel z>=20"
    );
    for (name, f) in &imps {
        let (mut centre, mut tail, mut far) = (0.0f64, 0.0f64, 0.0f64);
        for c in cases {
            let (z, want) = (c["z"].as_f64().ok_or("z")?, c["sf"].as_f64().ok_or("sf")?);
            if want < f64::MIN_POSITIVE {
                continue;
            }
            let rel = (f(z) - want).abs() / want;
            if z.abs() < 5.0 {
                centre = centre.max(rel);
            } else if z >= 5.0 {
                tail = tail.max(rel);
                if z >= 20.0 {
                    far = far.max(rel);
                }
            }
        }
        println!("{name:<28} {centre:>14.3e} {tail:>14.3e} {far:>14.3e}");
    }
    Ok(())
}
