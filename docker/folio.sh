#!/bin/sh
# /usr/local/bin/folio in both images: the `folio` command, under tini.
#
# Kubernetes runs a container's `command` (`folio serve`, `folio controller`, the Jobs'
# `folio runner --pod`) in place of the image's ENTRYPOINT, so tini cannot simply be the
# ENTRYPOINT: it is started here. As PID 1 it reaps the orphans LibreOffice and other engines
# leave behind and forwards signals to Node; under `kubectl exec` (not PID 1) -s makes it a
# child subreaper, which does the same for that command's own tree.
exec /usr/bin/tini -s -- /opt/folio/bin/folio "$@"
