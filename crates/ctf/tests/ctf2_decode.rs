//! A hand-made CTF 2 trace with the field classes CTF 1.8 lacks (boolean, optional,
//! UTF-16 string, relative field locations, LEB128 integer), decoded end to end.

fn dump(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let set = ctf::trace::TraceSet::open(dir).unwrap();
    let mut m = ctf::merge::Merger::new(&set);
    let mut out = Vec::new();
    while let Some(mut x) = m.next().unwrap() {
        ctf::dump::write_json(&mut out, &mut x.item).unwrap();
    }
    out.split(|b| *b == b'\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_slice(l).unwrap()).collect()
}

#[test]
fn optional_bool_utf16_relative_and_leb128() {
    let frags = [
        r#"{"type":"preamble","version":2}"#,
        r#"{"type":"trace-class"}"#,
        r#"{"type":"data-stream-class"}"#,
        r#"{"type":"event-record-class","name":"e","payload-field-class":{"type":"structure","member-classes":[
            {"name":"has","field-class":{"type":"fixed-length-boolean","length":8,"alignment":8}},
            {"name":"n","field-class":{"type":"fixed-length-unsigned-integer","length":8,"alignment":8}},
            {"name":"inner","field-class":{"type":"structure","member-classes":[
                {"name":"o","field-class":{"type":"optional","selector-field-location":{"path":[null,"has"]},
                    "field-class":{"type":"null-terminated-string","encoding":"utf-16le"}}},
                {"name":"a","field-class":{"type":"dynamic-length-array","length-field-location":{"path":[null,"n"]},
                    "element-field-class":{"type":"fixed-length-unsigned-integer","length":8,"alignment":8}}}]}},
            {"name":"v","field-class":{"type":"variable-length-signed-integer"}}]}}"#,
    ];
    let meta: Vec<u8> = frags.iter().flat_map(|f| std::iter::once(0x1e).chain(f.bytes())).collect();
    // Event 1: has, n = 2, o = "hé" (UTF-16LE, NUL), a = [7, 9], v = -2 (0x7e).
    // Event 2: !has, n = 0, no o, a = [], v = 300 (0xac 0x02).
    let stream = [1u8, 2, 0x68, 0, 0xe9, 0, 0, 0, 7, 9, 0x7e, 0, 0, 0xac, 0x02];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("metadata"), meta).unwrap();
    std::fs::write(dir.path().join("stream"), stream).unwrap();
    let d = dump(dir.path());
    assert_eq!(d.len(), 2);
    assert_eq!(d[0]["p"], serde_json::json!({"has": true, "n": 2, "inner": {"o": "hé", "a": [7, 9]}, "v": -2}));
    assert_eq!(d[1]["p"], serde_json::json!({"has": false, "n": 0, "inner": {"o": null, "a": []}, "v": 300}));
}
