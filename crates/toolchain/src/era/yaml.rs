//! Light, line-based reading of the YAML that CI files are written in: the raw text of a key's
//! values wherever the key appears. Raw text matters: YAML reads an unquoted `3.10` as the number
//! 3.1, while the author meant Python 3.10.

/// The raw values of `key` anywhere in `text`, in order: `key: v`, `key: [a, b]` (also spread over
/// lines), `- key: v` (a list item's mapping, as in `matrix: include:`) and a block list under
/// `key:` (`- a` lines). Quotes are removed; comments are ignored.
pub(crate) fn values(text: &str, key: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(strip_comment).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        i += 1;
        let Some((column, rest)) = key_value(lines[i - 1], key) else {
            continue;
        };
        if let Some(flow) = rest.strip_prefix('[') {
            let mut flow = flow.to_string();
            while !flow.contains(']') && i < lines.len() {
                flow.push(',');
                flow.push_str(lines[i]);
                i += 1;
            }
            let inside = flow.split(']').next().unwrap_or_default();
            out.extend(inside.split(',').filter_map(scalar));
        } else if !rest.is_empty() {
            out.extend(scalar(rest));
        } else {
            i = block_list(&lines, i, column, &mut out);
        }
    }
    out
}

/// If `line` is `key: rest` (possibly as a list item, `- key: rest`), the key's column and `rest`.
fn key_value<'a>(line: &'a str, key: &str) -> Option<(usize, &'a str)> {
    let mut column = line.len() - line.trim_start().len();
    let mut content = line.trim_start();
    while let Some(item) = content.strip_prefix("- ") {
        column += 2 + item.len() - item.trim_start().len();
        content = item.trim_start();
    }
    let rest = content.strip_prefix(key)?.strip_prefix(':')?;
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then(|| (column, rest.trim()))
}

/// Reads the `- item` lines from `start` that belong to a key at `column`; returns the next line.
fn block_list(lines: &[&str], start: usize, column: usize, out: &mut Vec<String>) -> usize {
    let mut i = start;
    while let Some(line) = lines.get(i) {
        let content = line.trim_start();
        if content.is_empty() {
            i += 1;
            continue;
        }
        let indent = line.len() - content.len();
        let item = content
            .strip_prefix('-')
            .filter(|r| r.is_empty() || r.starts_with(' '));
        match item {
            Some(item) if indent >= column => {
                let item = item.trim();
                // A mapping item (`- name: x`) is not a scalar of this list.
                if !item.contains(": ") && !item.ends_with(':') {
                    out.extend(scalar(item));
                }
                i += 1;
            }
            _ => break,
        }
    }
    i
}

/// A scalar's text without surrounding quotes and spaces; `None` when empty.
fn scalar(raw: &str) -> Option<String> {
    let s = raw.trim();
    let s = s
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .or_else(|| s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')))
        .unwrap_or(s)
        .trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// The line without a `#` comment (a `#` at the start or after a space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    for (at, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => return line[..at].trim_end(),
            None => {}
        }
        previous = c;
    }
    line.trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_flow_lists_and_block_lists() {
        let text = r#"
language: python
python:
  - "2.7"
  - 3.6   # the newest
  - '3.7-dev'
  - nightly
install: pip install .
jobs:
  include:
    - python: 3.8
      dist: xenial
    - name: lint
      python: "3.10"
"#;
        assert_eq!(
            values(text, "python"),
            ["2.7", "3.6", "3.7-dev", "nightly", "3.8", "3.10"]
        );
        let text = "strategy:\n  matrix:\n    python-version: [\"3.8\", 3.9,\n      '3.10']\n";
        assert_eq!(values(text, "python-version"), ["3.8", "3.9", "3.10"]);
    }

    #[test]
    fn block_list_at_the_keys_indent_and_its_end() {
        let text = "python:\n- 2.7\n- 3.5\nscript: pytest\n- 9.9\n";
        assert_eq!(values(text, "python"), ["2.7", "3.5"]);
        let text = "matrix:\n  python-version:\n    - 3.9\n  os:\n    - ubuntu\n";
        assert_eq!(values(text, "python-version"), ["3.9"]);
    }

    #[test]
    fn only_the_exact_key() {
        let text = "python-version: 3.9\npython_version: 3.8\npythons: 3.7\n# python: 3.6\n";
        assert_eq!(values(text, "python"), Vec::<String>::new());
        assert_eq!(values(text, "python-version"), ["3.9"]);
        assert_eq!(strip_comment("a: '#x' # y"), "a: '#x'");
    }
}
