//! Python's side of `etip select`: pytest node ids and the classes pytest's JUnit XML reports
//! them under.

/// The parts of a pytest node id, split at `::` outside parameter brackets
/// (`t.py::test_a[http://[::1]]` → `t.py`, `test_a[http://[::1]]`).
pub fn node_parts(node: &str) -> Vec<&str> {
    let b = node.as_bytes();
    let (mut parts, mut depth, mut start, mut i) = (Vec::new(), 0usize, 0, 0);
    while i < b.len() {
        match b[i] {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                parts.push(&node[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&node[start..]);
    parts
}

/// pytest's junit `classname` and `name` of a node id (`tests/test_a.py::TestB::test_c[x]` →
/// `tests.test_a.TestB`, `test_c[x]`).
pub fn pytest_case(node: &str) -> (String, String) {
    let parts = node_parts(node);
    let file = parts[0];
    let module = file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
    match parts.len() {
        1 => (module, String::new()),
        n => {
            let class = std::iter::once(module.as_str())
                .chain(parts[1..n - 1].iter().copied())
                .collect::<Vec<_>>()
                .join(".");
            (class, parts[n - 1].to_string())
        }
    }
}

/// pytest's junit `classname` of a node id (see [`pytest_case`]).
pub fn pytest_class(node: &str) -> String {
    pytest_case(node).0
}
