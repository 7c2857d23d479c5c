// Command demo is the arksave falling-sand demo.
package main

func main() {}
