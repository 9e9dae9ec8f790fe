//! Model checks: random update streams into small cubes; every range
//! answer equals the brute-force sum over the interval the answer says it covers, at
//! every level of the tilted frame; roll-ups equal the sums of their drill-downs;
//! every materialization gives the same answers; a saved cube answers as the live one.

use std::collections::BTreeMap;

use cube::{Agg, Cube, CubeConfig, LevelSpec, Materialization, Request, When};
use proptest::prelude::*;

const OPS: [(&str, &str); 4] = [("syscall", "read"), ("syscall", "write"), ("sched", "switch"), ("irq", "timer")];

fn config(m: Materialization) -> CubeConfig {
    CubeConfig {
        levels: vec![
            LevelSpec { granularity_ns: 10, span_ns: 200 },
            LevelSpec { granularity_ns: 50, span_ns: 1_000 },
            LevelSpec { granularity_ns: 250, span_ns: 1_000_000 },
        ],
        materialize: m,
        metrics: CubeConfig::default()
            .metrics
            .into_iter()
            .map(|mut x| {
                x.extremes = true;
                x
            })
            .collect(),
        ..CubeConfig::default()
    }
}

type Update = (u64, usize, usize, i64);

fn build(m: Materialization, ups: &[Update]) -> Cube {
    let mut c = Cube::new(config(m)).unwrap();
    let metric = c.schema.metric("events").unwrap();
    let (lo, hi) = c.schema.metrics[metric.0 as usize].extremes.unwrap();
    // Every member the filters name exists even where the stream never updates it: an
    // unknown member is an error, a known one with no data an empty answer.
    for (kind, name) in OPS {
        c.schema.dims[4].member(&[kind, name]);
    }
    for cpu in 0..3 {
        c.schema.dims[1].member(&[&cpu.to_string()]);
    }
    for &(t, op, cpu, d) in ups {
        let o = c.schema.dims[4].member(&[OPS[op].0, OPS[op].1]);
        let p = c.schema.dims[1].member(&[&cpu.to_string()]);
        // The feed's job: the companions get the same update.
        for m in [metric, lo, hi] {
            let cell = c.cell(m, &[o, p]);
            c.add(t, cell, d).unwrap();
        }
    }
    c.finish().unwrap();
    c
}

fn updates() -> impl Strategy<Value = Vec<Update>> {
    prop::collection::vec((0u64..40, 0usize..4, 0usize..3, 1i64..100), 1..300).prop_map(|v| {
        let mut t = 1_000u64;
        v.into_iter()
            .map(|(dt, op, cpu, d)| {
                t += dt * dt;
                (t, op, cpu, d)
            })
            .collect()
    })
}

fn ask(c: &Cube, by: &str, t1: u64, t2: u64, filters: Vec<(String, Vec<String>)>) -> (u64, u64, BTreeMap<String, f64>) {
    let mut r = Request::new("events", When::Range(t1, t2));
    r.by = vec![by.into()];
    r.filters = filters;
    let w = c.query(&r).unwrap().windows.remove(0);
    (w.begin_ns, w.end_ns, w.rows.into_iter().map(|r| (r.group[0].clone(), r.value)).collect())
}

fn ask_agg(c: &Cube, agg: Agg, by: &str, t1: u64, t2: u64) -> (u64, u64, BTreeMap<String, f64>) {
    let mut r = Request::new("events", When::Range(t1, t2));
    r.agg = agg;
    r.by = vec![by.into()];
    let w = c.query(&r).unwrap().windows.remove(0);
    (w.begin_ns, w.end_ns, w.rows.into_iter().map(|r| (r.group[0].clone(), r.value)).collect())
}

/// Min or max of the updates in `[b1, b2)` per group.
fn brute_ext(ups: &[Update], b1: u64, b2: u64, max: bool, key: impl Fn(&Update) -> String) -> BTreeMap<String, f64> {
    let mut m: BTreeMap<String, f64> = BTreeMap::new();
    for u in ups.iter().filter(|u| u.0 >= b1 && u.0 < b2) {
        let v = u.3 as f64;
        m.entry(key(u)).and_modify(|b| *b = if max { b.max(v) } else { b.min(v) }).or_insert(v);
    }
    m
}

fn brute(ups: &[Update], b1: u64, b2: u64, key: impl Fn(&Update) -> Option<String>) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for u in ups.iter().filter(|u| u.0 >= b1 && u.0 < b2) {
        if let Some(k) = key(u) {
            *m.entry(k).or_insert(0.0) += u.3 as f64;
        }
    }
    m.retain(|_, v| *v != 0.0);
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn ranges_equal_brute_force(ups in updates(), a in 0u64..60_000, len in 0u64..60_000) {
        let end = ups.last().unwrap().0;
        let (t1, t2) = (1_000 + a % (end - 999), 1_000 + (a + len) % (end + 600));
        let (t1, t2) = (t1.min(t2), t1.max(t2));
        let minimal = build(Materialization::Minimal, &ups);
        let full = build(Materialization::Full, &ups);
        let (b1, b2, got) = ask(&minimal, "operation:name", t1, t2, vec![]);
        prop_assert!(b1 <= t1.max(b1) && b2 <= t2.max(b2));
        prop_assert_eq!(&got, &brute(&ups, b1, b2, |u| Some(OPS[u.1].1.to_string())));
        // Roll-up = sum of drill-downs, on the fly (minimal) and materialized (full).
        let (_, _, kinds) = ask(&minimal, "operation:kind", t1, t2, vec![]);
        let mut summed: BTreeMap<String, f64> = BTreeMap::new();
        for (name, v) in &got {
            let kind = OPS.iter().find(|o| o.1 == name).unwrap().0;
            *summed.entry(kind.to_string()).or_default() += v;
        }
        prop_assert_eq!(&kinds, &summed);
        prop_assert_eq!(&ask(&full, "operation:kind", t1, t2, vec![]), &(b1, b2, kinds.clone()));
        prop_assert_eq!(&ask(&full, "cpu:cpu", t1, t2, vec![]), &ask(&minimal, "cpu:cpu", t1, t2, vec![]));
        // Slice and dice.
        let f = vec![("operation:kind".to_string(), vec!["syscall".to_string()]), ("cpu".to_string(), vec!["0".to_string(), "2".to_string()])];
        let (_, _, diced) = ask(&full, "operation:name", t1, t2, f);
        prop_assert_eq!(diced, brute(&ups, b1, b2, |u| (u.1 < 2 && u.2 != 1).then(|| OPS[u.1].1.to_string())));
    }

    #[test]
    fn min_max_equal_brute_force(ups in updates(), a in 0u64..60_000, len in 0u64..60_000, keep in 0usize..2) {
        // A longer stream (keep = 1) makes the fine levels expire: mixed-level covers.
        let ups: Vec<Update> = if keep == 1 { ups.iter().cycle().take(2_000).enumerate().map(|(i, u)| (1_000 + i as u64 * 37 + u.0 % 37, u.1, u.2, u.3)).collect() } else { ups };
        let end = ups.last().unwrap().0;
        let (t1, t2) = (1_000 + a % (end - 999), 1_000 + (a + len) % (end + 600));
        let (t1, t2) = (t1.min(t2), t1.max(t2));
        let minimal = build(Materialization::Minimal, &ups);
        let full = build(Materialization::Full, &ups);
        for (agg, max) in [(Agg::Min, false), (Agg::Max, true)] {
            let (b1, b2, got) = ask_agg(&minimal, agg, "operation:name", t1, t2);
            prop_assert!(b2 <= t2.max(minimal.now()) && b1 <= b2);
            prop_assert_eq!(&got, &brute_ext(&ups, b1, b2, max, |u| OPS[u.1].1.to_string()));
            // Rolled up on the fly and materialized: same answer, same interval.
            let kinds = ask_agg(&minimal, agg, "operation:kind", t1, t2);
            prop_assert_eq!(&kinds.2, &brute_ext(&ups, b1, b2, max, |u| OPS[u.1].0.to_string()));
            prop_assert_eq!(&ask_agg(&full, agg, "operation:kind", t1, t2), &kinds);
            prop_assert_eq!(&ask_agg(&full, agg, "cpu", t1, t2), &ask_agg(&minimal, agg, "cpu", t1, t2));
            // Whole history: every update, stated from the data's first boundary.
            let (w1, w2, all) = ask_agg(&minimal, agg, "operation:name", 0, u64::MAX);
            prop_assert_eq!((w1, w2), (minimal.data_begin(), minimal.now()));
            prop_assert_eq!(&all, &brute_ext(&ups, 0, u64::MAX, max, |u| OPS[u.1].1.to_string()));
        }
    }
}

#[test]
fn old_ranges_are_answered_coarser_and_exactly() {
    let ups: Vec<Update> = (0..20_000u64).map(|i| (1_000 + i * 7, (i % 4) as usize, (i % 3) as usize, (i % 5) as i64 + 1)).collect();
    let c = build(Materialization::Minimal, &ups);
    let now = c.now();
    // Recent: finest precision.
    let (b1, b2, got) = ask(&c, "operation:name", now - 95, now - 10, vec![]);
    assert_eq!((b1, b2), (now - 100, now - 10));
    assert_eq!(got, brute(&ups, b1, b2, |u| Some(OPS[u.1].1.to_string())));
    // Old: level 0 expired, answered at 50 or 250 ns, still exact for what it covers.
    let (b1, b2, got) = ask(&c, "operation:name", 5_013, 90_077, vec![]);
    assert!(b1 % 50 == 0 && b1 <= 5_013 && b2 <= 90_077 && b2 % 50 == 0, "{b1} {b2}");
    assert_eq!(got, brute(&ups, b1, b2, |u| Some(OPS[u.1].1.to_string())));
    // Memory is bounded: level 0 keeps about 1.25 spans of frames.
    assert!(c.records()[0] > 10_000);
    let r = c.query(&Request { agg: Agg::Sum, every: Some(1_000), ..Request::new("events", When::Last(3_000)) }).unwrap();
    assert_eq!(r.windows.len(), 3);
    assert_eq!(r.windows[2].end_ns, now);
}

#[test]
fn saved_cube_answers_the_same() {
    let ups: Vec<Update> = (0..5_000u64).map(|i| (1_000 + i * 13, (i % 4) as usize, (i % 3) as usize, 1)).collect();
    let mut c = build(Materialization::Full, &ups);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.cube");
    cube::save(&mut c, &path).unwrap();
    let d = cube::open(&path).unwrap();
    for (t1, t2) in [(0, 100_000), (20_000, 60_000), (c.now() - 100, c.now())] {
        for by in ["operation:name", "operation:kind", "cpu"] {
            assert_eq!(ask(&c, by, t1, t2, vec![]), ask(&d, by, t1, t2, vec![]));
            assert_eq!(ask_agg(&c, Agg::Max, by, t1, t2), ask_agg(&d, Agg::Max, by, t1, t2));
            assert_eq!(ask_agg(&c, Agg::Min, by, t1, t2), ask_agg(&d, Agg::Min, by, t1, t2));
        }
    }
    let mut r = Request::new("events", When::Range(0, 100_000));
    r.top = Some(2);
    r.by = vec!["operation".into()];
    let resp = d.query(&r).unwrap();
    assert_eq!(resp.windows[0].rows.len(), 2);
    assert!(resp.to_text().contains("read") || resp.to_text().contains("write"));
    assert!(resp.to_json()["windows"][0]["rows"].is_array());
}

#[test]
fn moving_and_whole_windows_state_the_data_interval() {
    // Updates end at 4_321.
    let ups: Vec<Update> = (0..100u64).map(|i| (1_234 + i * 31, (i % 4) as usize, 0, 2)).collect();
    let c = build(Materialization::Minimal, &ups);
    assert_eq!((c.data_begin(), c.now()), (1_230, 4_310));
    // Level 0 (10 ns) keeps its whole span before the end (finishing closes only the
    // last finest frame): the window is answered at 10 ns, exactly as asked.
    let r = c.query(&Request::new("events", When::Last(100))).unwrap();
    let w = &r.windows[0];
    assert_eq!((w.begin_ns, w.end_ns, w.begin_granularity_ns, w.begin_moved_ns), (4_210, 4_310, 10, 0));
    assert_eq!(w.rows[0].value, brute(&ups, 4_210, 4_310, |_| Some(String::new()))[""]);
    // Older than level 0 keeps: level 1 (50 ns), at its boundary nearest the request.
    let w = c.query(&Request::new("events", When::Last(1_000))).unwrap().windows.remove(0);
    assert_eq!((w.begin_ns, w.begin_granularity_ns, w.begin_moved_ns), (3_300, 50, -10));
    let r = c.query(&Request::new("events", When::At(u64::MAX))).unwrap();
    let w = &r.windows[0];
    assert_eq!((w.begin_ns, w.end_ns, w.rows[0].value), (1_230, 4_310, 200.0));
    assert!(r.to_text().contains("[1230, 4310) ns"), "{}", r.to_text());
    let m = c.query(&Request { agg: Agg::Max, ..Request::new("events", When::Last(1_000)) }).unwrap();
    let sum = c.query(&Request::new("events", When::Last(1_000))).unwrap();
    assert_eq!((m.windows[0].begin_ns, m.windows[0].end_ns, m.windows[0].rows[0].value), (sum.windows[0].begin_ns, 4_310, 2.0));
}
