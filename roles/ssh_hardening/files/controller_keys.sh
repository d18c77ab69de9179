# Run on the controller (vars/main.yml, __ssh_hardening_controller_keys): the public keys Ansible may log in
# with - the ssh-agent's, then for each private key file given and ~/.ssh/id_{ed25519,rsa,ecdsa} its .pub,
# else the public half derived from an unencrypted key. Keys that cannot be read are left out silently.
{ ssh-add -L; for f in "$@" ~/.ssh/id_ed25519 ~/.ssh/id_rsa ~/.ssh/id_ecdsa; do cat "$f.pub" || ssh-keygen -y -P "" -f "$f"; done; } 2>/dev/null; true
