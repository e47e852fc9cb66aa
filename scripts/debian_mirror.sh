# Sourced by the scripts that fetch Debian packages into build/ (aarch64_env.sh,
# python_env.sh): the one rule for which Debian archive they use.
#
#   source scripts/debian_mirror.sh
#   mirror=$(debian_mirror)
#
# DEBIAN_MIRROR when set; else the first Debian archive (not -security) among this machine's
# apt sources (deb822 .sources first, then one-line .list files); else Debian's own.
debian_mirror() {
    local mirror=${DEBIAN_MIRROR:-}
    [ -n "$mirror" ] || mirror=$(sed -n -e \
        's#^URIs:[[:space:]]*\(https\?://[^[:space:]]*/debian\)/\?[[:space:]]*$#\1#p' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    [ -n "$mirror" ] || mirror=$(sed -n -e \
        's#^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\(https\?://[^[:space:]]*/debian\)/\?[[:space:]].*#\2#p' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | head -n 1)
    [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
    echo "$mirror"
}
