"""etip's pytest plugin (`-p etip_sorted`), on PYTHONPATH of every smoke check and timed run.

1. The collected tests run in sorted node-id order, so both versions run them in the same order.
2. When the project says nothing about where its tests are (no `testpaths` in its pytest
   configuration) and pytest was started without paths, collection is limited to the test
   folders at the root (`tests`, `test`, `testing`), as a project's own CI usually runs them
   (`pytest tests`). Otherwise pytest would import every module of the repository: documentation
   helpers, scripts and examples whose imports the environment need not satisfy (psf/requests of
   2019 collected `docs/_themes/flask_theme_support.py`, which needs pygments, through its
   `--doctest-modules`).
"""

import os

TEST_FOLDERS = ("tests", "test", "testing")


def _test_roots(config):
    """The folders collection is limited to, or None to leave pytest's choice alone."""
    if config.getini("testpaths"):
        return None
    rootdir = os.path.abspath(str(config.rootpath))
    invoked = os.path.abspath(str(config.invocation_params.dir))
    # Without paths on the command line, pytest collects from where it was started.
    if [os.path.abspath(str(a)) for a in config.args] != [invoked] or invoked != rootdir:
        return None
    roots = [os.path.join(rootdir, f) for f in TEST_FOLDERS]
    roots = [r for r in roots if os.path.isdir(r)]
    return roots or None


def pytest_configure(config):
    config._etip_test_roots = _test_roots(config)


def pytest_ignore_collect(collection_path, config):
    roots = getattr(config, "_etip_test_roots", None)
    if not roots:
        return None
    path = str(collection_path)
    for root in roots:
        if path == root or path.startswith(root + os.sep) or root.startswith(path + os.sep):
            return None
    if path == str(config.rootpath):
        return None
    return True


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.nodeid)
