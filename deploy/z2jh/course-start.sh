#!/bin/sh
# The image's entrypoint (after tini): run the command as the pod's uid, named jovyan.
# On Kubernetes each user's pod runs with a uid of its own (values.yaml, hub.extraConfig), which
# the image's /etc/passwd does not list, and nbgrader looks the uid up there (pwd.getpwuid): it
# takes the student's name from JUPYTERHUB_USER when the uid's name is jovyan. nss_wrapper lends
# the uid that entry, for this process and everything it starts; uid 1000 needs none.
if ! getent passwd "$(id -u)" >/dev/null 2>&1; then
    dir=$(mktemp -d /tmp/course-nss.XXXXXX)
    grep -v '^jovyan:' /etc/passwd > "$dir/passwd"
    echo "jovyan:x:$(id -u):$(id -g):jovyan:${HOME:-/home/jovyan}:/bin/bash" >> "$dir/passwd"
    cp /etc/group "$dir/group"
    getent group "$(id -g)" >/dev/null 2>&1 || echo "course-$(id -g):x:$(id -g):" >> "$dir/group"
    export LD_PRELOAD=libnss_wrapper.so NSS_WRAPPER_PASSWD="$dir/passwd" NSS_WRAPPER_GROUP="$dir/group"
fi
exec "$@"
