"""nbgrader's file exchange, with submissions readable only by their author and the instructor.

nbgrader's own ``ExchangeSubmit`` leaves a submitted notebook world-readable (0644) in a folder
anyone may open (0777); only the folder's name (timestamp and random suffix) and the unlistable
``inbound`` folder (0733) hide it. Here a submission's files are 0640 and its folders 0750/0770:
``inbound`` is set-group-ID with the instructor's group (nbgrader sets it up so), so the instructor
reads every submission through the group and another learner reads none, even knowing its name.

Installed next to nbgrader in the hub's environment by ``tools/hub.py setup`` and selected with
``c.ExchangeFactory.submit = "course_hub_exchange.PrivateSubmit"``.
"""

from __future__ import annotations

import os
import stat

from nbgrader.exchange.default.submit import ExchangeSubmit

FILE_MODE = stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP                       # 0640
DIR_MODE = stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP                        # 0750
TOP_MODE = stat.S_IRWXU | stat.S_IRWXG                                       # 0770: the instructor may delete it


class PrivateSubmit(ExchangeSubmit):
    """Submit as nbgrader does, then close the submission to everyone but the instructor's group."""

    def do_copy(self, src, dest, log=None):
        """Copy as nbgrader does, but keep the submission folder set-group-ID.

        ``shutil.copytree`` ends by copying the learner's folder mode onto the new folder, which
        clears its set-group-ID bit (the learner is not in the instructor's group); the files
        nbgrader writes afterwards (``timestamp.txt``) would then take the learner's group and the
        instructor could not collect them. So: make the folder here (it inherits the group and the
        bit from ``inbound``), let nbgrader copy into a folder inside it, and move the files up.
        """
        if os.path.dirname(os.path.abspath(dest)) != os.path.abspath(self.inbound_path):
            return super().do_copy(src, dest, log)
        os.mkdir(dest)
        incoming = os.path.join(dest, ".incoming")
        super().do_copy(src, incoming, log)
        for name in os.listdir(incoming):
            os.rename(os.path.join(incoming, name), os.path.join(dest, name))
        os.rmdir(incoming)

    def copy_files(self):
        super().copy_files()
        dest = os.path.join(self.inbound_path, self.assignment_filename)
        for dirpath, dirnames, filenames in os.walk(dest):
            for name in filenames:
                os.chmod(os.path.join(dirpath, name), FILE_MODE)
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), DIR_MODE)
        os.chmod(dest, TOP_MODE)
