//! Prints the member layout of a Java file: `cargo run -p etip-lang --example layout_dump -- FILE`.
use etip_lang::java_layout::Layout;

fn main() {
    let path = std::env::args().nth(1).expect("usage: layout_dump FILE");
    let src = std::fs::read(&path).expect("read");
    let Some(l) = Layout::scan(&src) else {
        println!("not understood by the layout scan");
        return;
    };
    for (i, t) in l.types.iter().enumerate() {
        println!(
            "type {i} {:?} {} parent {:?} segments {:?}",
            t.kind, t.name, t.parent, t.segments
        );
    }
    for (i, s) in l.segments.iter().enumerate() {
        let text = String::from_utf8_lossy(&src[s.bytes.clone()]);
        let first = text.lines().next().unwrap_or("");
        println!(
            "seg {i} ty {} rows {:?} init {} nested {:?} bytes {}: {first}",
            s.ty,
            s.rows,
            s.initializer,
            s.nested,
            s.bytes.len()
        );
    }
}
