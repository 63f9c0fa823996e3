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


def test_unknown_argument_is_refused(capsys):
    with pytest.raises(SystemExit) as info:
        setup_lab.main(["--clasroom"])
    assert info.value.code == 2 and "--clasroom" in capsys.readouterr().err


def test_news_toast_off_and_markdown_rendered(tmp_path):
    data = json.loads(setup_lab.write_overrides(tmp_path).read_text())
    assert data["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert data["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]["markdown"] == "Markdown Preview"


def test_maintainers_files_hidden_from_the_file_browser_unless_asked(tmp_path):
    path = setup_lab.write_server_config(prefix=tmp_path)
    globs = json.loads(path.read_text())["ContentsManager"]["hide_globs"]
    assert {"course_lib", "tests", "__pycache__"} <= set(globs)
    assert not {"notebooks", "exercises", "solutions", "my_work"} & set(globs)
    setup_lab.write_server_config(show_all_files=True, prefix=tmp_path)
    assert "ContentsManager" not in json.loads(path.read_text())


def test_the_server_reads_the_hidden_files_setting(tmp_path, monkeypatch):
    """jupyter_server reads general settings from jupyter_server_config.json, not a .d folder."""
    from jupyter_server.serverapp import ServerApp

    setup_lab.write_server_config(prefix=tmp_path)
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "etc" / "jupyter"))
    app = ServerApp()
    app.load_config_file()
    assert "course_lib" in app.config.ContentsManager.hide_globs


def test_help_is_printed(capsys):
    with pytest.raises(SystemExit) as info:
        setup_lab.main(["--help"])
    assert info.value.code == 0
    assert "--classroom" in capsys.readouterr().out


def test_flags_and_prefix_are_checked(tmp_path):
    from course_lib import setup_lab
    for bad in ("False", 2, [], None):
        with pytest.raises(TypeError, match="classroom"):
            setup_lab.write_page_config(classroom=bad, prefix=tmp_path)
        with pytest.raises(TypeError, match="show_all_files"):
            setup_lab.write_server_config(show_all_files=bad, prefix=tmp_path)
    with pytest.raises(TypeError, match="prefix"):
        setup_lab.write_overrides(prefix=None)


def test_generate_and_normalize_check_their_flag_and_root(tmp_path):
    from course_lib.exercises import generate
    from course_lib.exercises.authoring import normalize
    for fn in (generate, normalize):
        for bad in ("False", 2, []):
            with pytest.raises(TypeError, match="check"):
                fn(root=tmp_path, check=bad)
        with pytest.raises(TypeError, match="root"):
            fn(root=5, check=True)
    with pytest.raises(FileNotFoundError, match="root"):
        generate(root=tmp_path, check=True)
