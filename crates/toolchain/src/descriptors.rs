//! Build descriptors: the files a repository's dependencies are resolved from (the env layer's
//! context). A change to one of them gives a new env layer.

use etip_core::Language;

/// Is this repository file a build descriptor that the env layer needs?
///
/// Java (Maven): every `pom.xml` outside `src/` trees, `.mvn/**` and `mvnw`. Python: root-level
/// `pyproject.toml`, `setup.cfg`, `setup.py`, `tox.ini`, `Pipfile`, `Pipfile.lock`, `poetry.lock`,
/// requirement files (`*.txt` with `requirements` in the name: `requirements.txt`,
/// `requirements-dev.txt`, `dev-requirements.txt`, `test_requirements.txt`) and `constraints*.txt`,
/// and every `.txt` file under the root folder `requirements/`.
pub fn is_descriptor(lang: Language, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match lang {
        Language::Java => {
            (name == "pom.xml" && !path.contains("/src/") && !path.starts_with("src/"))
                || path.starts_with(".mvn/")
                || path == "mvnw"
        }
        Language::Python => {
            let txt = name.ends_with(".txt");
            if let Some(inside) = path.strip_prefix("requirements/") {
                return txt && !inside.is_empty();
            }
            !path.contains('/')
                && (matches!(
                    name,
                    "pyproject.toml"
                        | "setup.cfg"
                        | "setup.py"
                        | "tox.ini"
                        | "Pipfile"
                        | "Pipfile.lock"
                        | "poetry.lock"
                ) || (txt && name.to_ascii_lowercase().contains("requirements"))
                    || (txt && name.starts_with("constraints")))
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

    #[test]
    fn python_requirement_files_and_tox_are_descriptors() {
        for path in [
            "setup.cfg",
            "setup.py",
            "tox.ini",
            "requirements.txt",
            "dev-requirements.txt",
            "test_requirements.txt",
            "Requirements-Test.txt",
            "constraints.txt",
            "requirements/base.txt",
            "requirements/ci/py311.txt",
        ] {
            assert!(is_descriptor(Language::Python, path), "{path}");
        }
        for path in [
            "docs/requirements.txt",
            "pkg/pyproject.toml",
            "pkg/tox.ini",
            "requirements/README.md",
            "requirements.in",
            "src/requirements/x.txt",
            "README.txt",
        ] {
            assert!(!is_descriptor(Language::Python, path), "{path}");
        }
    }
}
