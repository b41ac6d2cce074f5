package main

import "errors"

// auditCmd is a placeholder until `rein audit verify|show` lands.
type auditCmd struct{}

func (auditCmd) Run() error { return errors.New("rein audit is not built yet") }
