//! Build descriptors: the files a repository's dependencies are resolved from (the env layer's
//! context). A change to one of them gives a new env layer.

use etip_core::Language;

/// Is this repository file a build descriptor that the env layer needs?
///
/// Java (Maven): every `pom.xml` outside `src/` trees, `.mvn/**` and `mvnw`. Python: root-level
/// `pyproject.toml`, `setup.cfg`, `setup.py`, `Pipfile`, `Pipfile.lock`, `poetry.lock`,
/// `requirements*.txt` and `constraints*.txt`.
pub fn is_descriptor(lang: Language, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match lang {
        Language::Java => {
            (name == "pom.xml" && !path.contains("/src/") && !path.starts_with("src/"))
                || path.starts_with(".mvn/")
                || path == "mvnw"
        }
        Language::Python => {
            !path.contains('/')
                && (matches!(
                    name,
                    "pyproject.toml" | "setup.cfg" | "setup.py" | "Pipfile" | "Pipfile.lock"
                ) || name == "poetry.lock"
                    || (name.starts_with("requirements") && name.ends_with(".txt"))
                    || (name.starts_with("constraints") && name.ends_with(".txt")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors() {
        assert!(is_descriptor(Language::Java, "pom.xml"));
        assert!(is_descriptor(Language::Java, "core/pom.xml"));
        assert!(is_descriptor(Language::Java, ".mvn/jvm.config"));
        assert!(!is_descriptor(
            Language::Java,
            "core/src/test/resources/pom.xml"
        ));
        assert!(!is_descriptor(Language::Java, "src/Main.java"));
        assert!(is_descriptor(Language::Python, "pyproject.toml"));
        assert!(is_descriptor(Language::Python, "requirements-dev.txt"));
        assert!(!is_descriptor(Language::Python, "pkg/setup.py"));
    }
}
