package main

import "errors"

// rollbackCmd is a placeholder until `rein rollback` lands.
type rollbackCmd struct{}

func (rollbackCmd) Run() error { return errors.New("rein rollback is not built yet") }
