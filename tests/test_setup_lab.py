"""make install's JupyterLab settings: written inside the environment, merged, never clobbered."""

import json

import pytest

from course_lib import setup_lab


def test_overrides_map_python_to_jupytext_and_keep_other_settings(tmp_path):
    path = setup_lab.overrides_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}))
    setup_lab.write_overrides(tmp_path)
    data = json.loads(path.read_text())
    assert data["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["python"] == "Jupytext Notebook"
    assert data["@jupyterlab/apputils-extension:themes"]["theme"] == "JupyterLab Dark"


def test_instructor_extensions_hidden_for_learners_and_shown_for_classrooms(tmp_path):
    path = setup_lab.write_page_config(classroom=False, prefix=tmp_path)
    assert json.loads(path.read_text())["disabledExtensions"] == {"@jupyter/nbgrader": True}
    setup_lab.write_page_config(classroom=True, prefix=tmp_path)
    assert json.loads(path.read_text())["disabledExtensions"] == {}


def test_unknown_argument_is_refused():
    with pytest.raises(SystemExit, match="--classroom"):
        setup_lab.main(["--clasroom"])
