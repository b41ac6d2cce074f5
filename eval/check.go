package eval

// The outcomes of a ground-truth check (CheckAnswer).
const (
	CheckPass = "pass" // the session ended done and its answer holds the expected number
	CheckFail = "fail" // it did not end done, or its answer does not hold the number
	CheckNone = "none" // there was no ground truth to check against
)

// CheckAnswer is the ground-truth check of a session's answer: CheckNone
// when expect is empty; else CheckPass when the session ended done and the
// answer contains the expected number (ContainsNumber, so "1 399 kr"
// holds 1399), CheckFail otherwise. A session that did not end done never
// passes, whatever its last text said. The error is for an expect that is
// not plain decimal notation (ParseExpected).
func CheckAnswer(expect string, done bool, answer string) (string, error) {
	if expect == "" {
		return CheckNone, nil
	}
	want, err := ParseExpected(expect)
	if err != nil {
		return "", err
	}
	if done && ContainsNumber(answer, want) {
		return CheckPass, nil
	}
	return CheckFail, nil
}
