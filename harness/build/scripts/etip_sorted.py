"""etip's pytest plugin (`-p etip_sorted`), on PYTHONPATH of every smoke check and timed run.

1. The collected tests run in sorted node-id order, so both versions run them in the same order.
2. When the project says nothing about where its tests are (no `testpaths` in its pytest
   configuration) and pytest was started without paths, collection is limited to the test
   folders at the root (`tests`, `test`, `testing`), as a project's own CI usually runs them
   (`pytest tests`). Otherwise pytest would import every module of the repository: documentation
   helpers, scripts and examples whose imports the environment need not satisfy (psf/requests of
   2019 collected `docs/_themes/flask_theme_support.py`, which needs pygments, through its
   `--doctest-modules`).

Works with the pytest of a commit's time too: pytest 7 renamed the hooks' `path` argument
`collection_path` (and 8 dropped `path`), 6.1 added `config.rootpath`, 5.1
`config.invocation_params`; without the latter, collection is left to pytest.
"""

import os

import pytest

TEST_FOLDERS = ("tests", "test", "testing")
PYTEST_MAJOR = int(pytest.__version__.split(".")[0])


def _rootdir(config):
    return str(getattr(config, "rootpath", None) or config.rootdir)


def _test_roots(config):
    """The folders collection is limited to, or None to leave pytest's choice alone."""
    params = getattr(config, "invocation_params", None)
    if params is None or config.getini("testpaths"):
        return None
    rootdir = os.path.abspath(_rootdir(config))
    invoked = os.path.abspath(str(params.dir))
    # Without paths on the command line, pytest collects from where it was started.
    if [os.path.abspath(str(a)) for a in config.args] != [invoked] or invoked != rootdir:
        return None
    roots = [os.path.join(rootdir, f) for f in TEST_FOLDERS]
    roots = [r for r in roots if os.path.isdir(r)]
    return roots or None


def pytest_configure(config):
    config._etip_test_roots = _test_roots(config)


def _ignore(path, config):
    roots = getattr(config, "_etip_test_roots", None)
    if not roots:
        return None
    for root in roots:
        if path == root or path.startswith(root + os.sep) or root.startswith(path + os.sep):
            return None
    if path == _rootdir(config):
        return None
    return True


if PYTEST_MAJOR >= 7:

    def pytest_ignore_collect(collection_path, config):
        return _ignore(str(collection_path), config)

else:

    def pytest_ignore_collect(path, config):
        return _ignore(str(path), config)


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.nodeid)
