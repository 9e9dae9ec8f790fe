//! Live replays (issue 48, C4, C6, D4): a random update stream is fed into a cube
//! with a random tilted frame; at every poll a random moving window (`last`) and a
//! random past range are asked, and each answer must equal the brute-force sum over
//! the interval it states, come from the finest level that keeps its start, with
//! each end at the kept boundary nearest the request. A cube saved mid-stream and at
//! the end answers exactly as the live one did.

use std::collections::BTreeMap;

use cube::{Cube, CubeConfig, LevelSpec, Request, When, Window};
use proptest::prelude::*;

const OPS: [(&str, &str); 3] = [("syscall", "read"), ("syscall", "write"), ("sched", "switch")];

/// Tilted frames: the usual shape, a single level, and one whose finest span is
/// shorter than the next granularity (a gap between levels).
fn levels(shape: usize) -> Vec<LevelSpec> {
    let l = |g, s| LevelSpec { granularity_ns: g, span_ns: s };
    match shape {
        0 => vec![l(10, 200), l(50, 1_000), l(250, 1_000_000)],
        1 => vec![l(10, 300)],
        2 => vec![l(10, 40), l(100, 600), l(500, 2_000)],
        _ => vec![l(10, 100), l(20, 200), l(60, 400)],
    }
}

type Update = (u64, usize, usize, i64);

fn add(c: &mut Cube, &(t, op, cpu, d): &Update) {
    let m = c.schema.metric("events").unwrap();
    let o = c.schema.dims[4].member(&[OPS[op].0, OPS[op].1]);
    let p = c.schema.dims[1].member(&[&cpu.to_string()]);
    let cell = c.cell(m, &[o, p]);
    c.add(t, cell, d).unwrap();
}

fn brute(ups: &[Update], b1: u64, b2: u64) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for u in ups.iter().filter(|u| u.0 >= b1 && u.0 < b2) {
        *m.entry(OPS[u.1].1.to_string()).or_insert(0.0) += u.3 as f64;
    }
    m.retain(|_, v| *v != 0.0);
    m
}

fn ask(c: &Cube, when: When) -> Window {
    let mut r = Request::new("events", when);
    r.by = vec!["operation:name".into()];
    c.query(&r).unwrap().windows.remove(0)
}

fn rows(w: &Window) -> BTreeMap<String, f64> {
    w.rows.iter().map(|r| (r.group[0].clone(), r.value)).collect()
}

/// The end at `stated` answers the request `t` as the tilted frame promises: from the
/// finest level that keeps `t`, at its boundary nearest `t`; or, when no level keeps
/// `t`, from the kept boundary nearest `t`.
fn check_end(c: &Cube, t: u64, stated: u64, g: u64) -> Result<(), TestCaseError> {
    let covering = c.levels().iter().find(|l| l.kept_ns().is_some_and(|(lo, hi)| lo <= t && t <= hi));
    match covering {
        Some(l) => {
            prop_assert_eq!(g, l.spec.granularity_ns, "t {} stated {}", t, stated);
            prop_assert!(stated.abs_diff(t) * 2 <= g, "t {} stated {} g {}", t, stated, g);
        }
        None => {
            let nearest = c.levels().iter().filter_map(|l| l.kept_ns()).map(|(lo, hi)| t.clamp(lo, hi).abs_diff(t)).min().unwrap();
            prop_assert_eq!(stated.abs_diff(t), nearest, "t {} stated {}", t, stated);
        }
    }
    Ok(())
}

/// Checks one moving window and one past range on `c`, fed with `seen`.
fn check_poll(c: &Cube, seen: &[Update], d: u64, back: u64, len: u64) -> Result<(), TestCaseError> {
    let now = c.now();
    let w = ask(c, When::Last(d));
    prop_assert_eq!(w.end_ns, now);
    prop_assert_eq!(rows(&w), brute(seen, w.begin_ns, w.end_ns), "last {} answered [{}, {})", d, w.begin_ns, w.end_ns);
    prop_assert_eq!(w.end_moved_ns, 0);
    let t1 = now.saturating_sub(d);
    if t1 > seen[0].0 {
        prop_assert_eq!(w.begin_moved_ns, w.begin_ns as i64 - t1 as i64);
        if w.end_ns - w.begin_ns > w.begin_granularity_ns {
            // Not widened from a collapsed window: the start at its nearest boundary.
            check_end(c, t1, w.begin_ns, w.begin_granularity_ns)?;
        }
        // The finest level answers any window up to its span (the paper's promise).
        let l0 = c.levels()[0].spec;
        if d <= l0.span_ns {
            prop_assert_eq!(w.begin_granularity_ns, l0.granularity_ns, "last {} of now {}", d, now);
        }
    }
    // A range in the past.
    let t2 = now.saturating_sub(back);
    let t1 = t2.saturating_sub(len);
    if t1 > seen[0].0 && t2 > t1 {
        let w = ask(c, When::Range(t1, t2));
        prop_assert_eq!(rows(&w), brute(seen, w.begin_ns, w.end_ns), "range [{}, {}) answered [{}, {})", t1, t2, w.begin_ns, w.end_ns);
        prop_assert!(w.end_ns > w.begin_ns, "a non-empty request is never answered empty: [{}, {})", t1, t2);
        if w.end_ns - w.begin_ns > w.end_granularity_ns.max(w.begin_granularity_ns) {
            // Not widened from a collapsed range: both ends at their nearest boundary.
            check_end(c, t1, w.begin_ns, w.begin_granularity_ns)?;
            check_end(c, t2, w.end_ns, w.end_granularity_ns)?;
        }
    }
    Ok(())
}

fn stream() -> impl Strategy<Value = Vec<Update>> {
    prop::collection::vec((0u64..30, 0usize..3, 0usize..2, 1i64..50), 1..400).prop_map(|v| {
        let mut t = 1_000u64;
        v.into_iter()
            .map(|(dt, op, cpu, d)| {
                t += dt * dt / 4;
                (t, op, cpu, d)
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn live_windows_equal_brute_force(
        ups in stream(),
        shape in 0usize..4,
        polls in prop::collection::vec((1usize..40, 1u64..3_000, 0u64..3_000, 1u64..400), 1..30),
        save_at in 0usize..30,
    ) {
        let cfg = CubeConfig { levels: levels(shape), ..CubeConfig::default() };
        let mut c = Cube::new(cfg).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut i = 0;
        for (k, &(step, d, back, len)) in polls.iter().enumerate() {
            let j = (i + step).min(ups.len());
            ups[i..j].iter().for_each(|u| add(&mut c, u));
            i = j;
            check_poll(&c, &ups[..i], d, back, len)?;
            if k == save_at {
                // Saved mid-stream: the same answers as live, now.
                let path = dir.path().join("mid.cube");
                let live = (ask(&c, When::Last(d)), ask(&c, When::At(u64::MAX)));
                cube::save(&mut c, &path).unwrap();
                let saved = cube::open(&path).unwrap();
                prop_assert_eq!((ask(&saved, When::Last(d)), ask(&saved, When::At(u64::MAX))), live);
            }
        }
        ups[i..].iter().for_each(|u| add(&mut c, u));
        c.finish().unwrap();
        // Finished: every update is in the whole history, and a window of the finest
        // span ends at the frame after the last update.
        let all = ask(&c, When::At(u64::MAX));
        prop_assert_eq!(rows(&all), brute(&ups, 0, u64::MAX));
        let g0 = c.levels()[0].spec.granularity_ns;
        prop_assert_eq!(c.now(), ups.last().unwrap().0 / g0 * g0 + g0);
        check_poll(&c, &ups, polls[0].1, polls[0].2, polls[0].3)?;
        let path = dir.path().join("end.cube");
        let asks: Vec<When> = polls.iter().flat_map(|p| [When::Last(p.1), When::Range(c.now().saturating_sub(p.2 + p.3), c.now().saturating_sub(p.2))]).collect();
        let live: Vec<Window> = asks.iter().map(|&w| ask(&c, w)).collect();
        cube::save(&mut c, &path).unwrap();
        let saved = cube::open(&path).unwrap();
        let again: Vec<Window> = asks.iter().map(|&w| ask(&saved, w)).collect();
        prop_assert_eq!(again, live);
    }
}

#[test]
fn short_ranges_round_to_the_nearest_boundary() {
    let mut c = Cube::new(CubeConfig { levels: vec![LevelSpec { granularity_ns: 1_000, span_ns: 1_000_000 }], ..CubeConfig::default() }).unwrap();
    let ups: Vec<Update> = (0..100u64).map(|i| (10_000 + i * 100, 0, 0, 1)).collect();
    ups.iter().for_each(|u| add(&mut c, u));
    c.finish().unwrap();
    // 0.9 of a frame inside one frame: that frame, ends moved by 50 each way.
    let w = ask(&c, When::Range(12_050, 12_950));
    assert_eq!((w.begin_ns, w.end_ns, w.begin_moved_ns, w.end_moved_ns), (12_000, 13_000, -50, 50));
    assert_eq!(rows(&w)["read"], 10.0);
    // 0.3 of a frame: not empty, the frame overlapping it most.
    let w = ask(&c, When::Range(14_100, 14_400));
    assert_eq!((w.begin_ns, w.end_ns), (14_000, 15_000));
    let w = ask(&c, When::Range(14_600, 14_900));
    assert_eq!((w.begin_ns, w.end_ns), (14_000, 15_000));
    // Single level: the last frame is there (item 5).
    assert_eq!(rows(&ask(&c, When::At(u64::MAX)))["read"], 100.0);
    assert!(c.query(&Request::new("events", When::Range(12_050, 12_950))).unwrap().to_text().contains("moved -50ns"));
}
