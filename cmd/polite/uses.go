package main

import (
	"fmt"
	"strings"

	"github.com/polite-go/polite/robotstxt"
)

// usesValue is a flag's categories of use, separated by commas and
// repeatable: "train-ai,search".
type usesValue []robotstxt.Category

func (u *usesValue) String() string {
	var s []string
	for _, c := range *u {
		s = append(s, string(c))
	}
	return strings.Join(s, ",")
}

func (u *usesValue) Set(v string) error {
	uses, err := parseUses(v)
	*u = append(*u, uses...)
	return err
}

// parseUses reads categories of use separated by commas. A category is
// a label as the aipref vocabulary writes one: lower-case letters,
// digits, '_', '-', '.' and '*'.
func parseUses(v string) ([]robotstxt.Category, error) {
	var uses []robotstxt.Category
	for s := range strings.SplitSeq(v, ",") {
		c := robotstxt.Category(strings.TrimSpace(s))
		if (robotstxt.Usage{}).With(c, robotstxt.No).Of(c) != robotstxt.No {
			return nil, fmt.Errorf("%q is not a category of use, such as train-ai, search or ai-input", c)
		}
		uses = append(uses, c)
	}
	return uses, nil
}

// crawlerUsesValue is audit's -use: TOKEN=USES, repeatable; the uses
// that the crawler named TOKEN, or every crawler for *, declares.
type crawlerUsesValue map[string][]robotstxt.Category

func (m crawlerUsesValue) String() string {
	var s []string
	for token, uses := range m {
		u := usesValue(uses)
		s = append(s, token+"="+u.String())
	}
	return strings.Join(s, " ")
}

func (m crawlerUsesValue) Set(v string) error {
	token, list, ok := strings.Cut(v, "=")
	token = strings.ToLower(strings.TrimSpace(token))
	if !ok || token == "" {
		return fmt.Errorf("want TOKEN=USES, such as gptbot=train-ai")
	}
	uses, err := parseUses(list)
	if err != nil {
		return err
	}
	m[token] = append(m[token], uses...)
	return nil
}

// ruleTexts returns the rules as robots.txt writes them, quoted, joined
// by "; ".
func ruleTexts(rules []robotstxt.UsageRule) string {
	var s []string
	for _, r := range rules {
		s = append(s, quoteRule(r.String()))
	}
	return strings.Join(s, "; ")
}
